// Enhancements only: every page works without this file.
document.addEventListener('DOMContentLoaded', () => {
  // Copy buttons: <button data-copy="element-id">.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = 'Copied';
      } catch {
        const range = document.createRange();
        range.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        button.textContent = 'Selected: press Ctrl+C';
      }
      setTimeout(() => (button.textContent = label), 2500);
    });
  }
  // An error summary takes the focus, so screen readers announce what went wrong.
  const summary = document.querySelector('[data-autofocus]');
  if (summary) summary.focus();
});
