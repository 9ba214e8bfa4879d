// Enhancements only: every page works without this file.
(() => {
  'use strict';

  async function copyText(button, text, label) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Press Ctrl+C to copy';
      return false;
    } finally {
      setTimeout(() => {
        button.textContent = label;
      }, 2500);
    }
    return true;
  }

  function selectContents(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function start() {
    // Controls that need this script (copy buttons…) are hidden in the HTML until it runs.
    for (const element of document.querySelectorAll('[data-js-only]')) element.hidden = false;

    // Code blocks of the docs: a "Copy" button on each.
    for (const pre of document.querySelectorAll('pre[data-copyable]')) {
      const code = pre.querySelector('code') || pre;
      const wrapper = document.createElement('div');
      wrapper.className = 'code-block';
      pre.replaceWith(wrapper);
      wrapper.append(pre);
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'copy-button';
      button.textContent = 'Copy';
      button.setAttribute('aria-label', 'Copy this code');
      button.addEventListener('click', async () => {
        if (!(await copyText(button, code.textContent.replace(/\n$/, ''), 'Copy'))) selectContents(code);
      });
      wrapper.append(button);
    }

    // App pages: <button data-copy="element-id"> copies that element's text.
    for (const button of document.querySelectorAll('button[data-copy]')) {
      button.addEventListener('click', async () => {
        const source = document.getElementById(button.dataset.copy);
        if (!source) return;
        const label = button.textContent;
        if (!(await copyText(button, source.textContent.trim(), label))) selectContents(source);
      });
    }

    // An error summary takes the focus, so screen readers announce what went wrong.
    const summary = document.querySelector('[data-autofocus]');
    if (summary) summary.focus();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
