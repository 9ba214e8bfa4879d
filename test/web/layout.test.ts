import { html, raw } from 'hono/html';
import { describe, expect, it } from 'vitest';
import { errorSummary, fieldError, invalidAttrs, loadPageAssets, renderPage } from '../../src/web/index.js';

const assets = loadPageAssets();
const hostile = `<script>alert("x")</script>&'"`;

describe('page layout', () => {
  it('escapes every value it is given', () => {
    const page = renderPage({
      title: hostile,
      description: hostile,
      assets,
      nav: { label: hostile, items: [{ href: `/"onmouseover="x`, label: hostile }] },
      main: html`<p>${hostile}</p>`,
    });
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('"onmouseover="');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;&quot;');
  });

  it('keeps raw HTML only where the caller asks for it', () => {
    const page = renderPage({ title: 'Guide', assets, main: html`<article>${raw('<h2 id="a">A</h2>')}</article>` });
    expect(page).toContain('<article><h2 id="a">A</h2></article>');
  });

  it('links the shared stylesheet, script and icon by their hashed addresses, with no inline script or style', () => {
    const page = renderPage({ title: 'Guide', assets, main: 'x' });
    expect(page).toContain(`<link rel="stylesheet" href="${assets.href('plinth.css')}">`);
    expect(page).toContain(`<script src="${assets.href('plinth.js')}" defer></script>`);
    expect(page).toContain(assets.href('favicon.svg'));
    expect(page).not.toMatch(/<style|style="|<script>|\son[a-z]+=/i);
    expect(page).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(page).toContain('<title>Guide · Plinth</title>');
    expect(page).toContain('<a class="skip-link" href="#main">');
  });

  it('marks the current navigation entry', () => {
    const page = renderPage({
      title: 'x',
      assets,
      nav: {
        label: 'Docs',
        items: [
          { href: '/a', label: 'A' },
          { href: '/b', label: 'B' },
        ],
        current: '/b',
      },
      main: '',
    });
    expect(page).toContain('<a href="/a">A</a>');
    expect(page).toContain('<a href="/b" aria-current="page">B</a>');
  });

  it('renders an error summary that links to each field, and the field messages', () => {
    const errors = [{ field: 'email', message: `Enter an e-mail address like name@example.com ${hostile}` }];
    const summary = String(errorSummary(errors));
    expect(summary).toContain('role="alert"');
    expect(summary).toContain('<a href="#email">Enter an e-mail address like name@example.com &lt;script&gt;');
    expect(String(fieldError(errors, 'email'))).toContain('id="email-error"');
    expect(String(invalidAttrs(errors, 'email'))).toBe('aria-invalid="true" aria-describedby="email-error"');
    expect(errorSummary([])).toBe('');
    expect(fieldError(errors, 'name')).toBe('');
  });
});
