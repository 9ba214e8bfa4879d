import { Marked, type Tokens } from 'marked';

/**
 * Markdown → HTML for our own guides (trusted text: raw HTML in them is kept). Headings get ids
 * and a "#" link, and h2/h3 are collected for the table of contents; tables scroll on their own
 * on narrow screens; code blocks are focusable (they scroll) and get a copy button from plinth.js.
 */

export interface TocEntry {
  depth: 2 | 3;
  id: string;
  text: string;
}

export interface RenderedMarkdown {
  html: string;
  toc: TocEntry[];
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** GitHub-style heading ids: lower case, punctuation dropped, spaces to hyphens. */
export function slugify(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/&[a-z0-9#]+;/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s+/g, '-') || 'section'
  );
}

export function renderMarkdown(markdown: string): RenderedMarkdown {
  const toc: TocEntry[] = [];
  const used = new Map<string, number>();
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Heading) {
        const inner = this.parser.parseInline(token.tokens);
        const plain = token.text.replace(/`/g, '');
        let id = slugify(plain);
        const seen = used.get(id) ?? 0;
        used.set(id, seen + 1);
        if (seen > 0) id = `${id}-${seen + 1}`;
        if (token.depth === 2 || token.depth === 3) toc.push({ depth: token.depth, id, text: plain });
        if (token.depth === 1) return `<h1 id="${id}">${inner}</h1>\n`;
        const label = `Link to this section: ${escapeHtml(plain)}`;
        return `<h${token.depth} id="${id}">${inner}<a class="anchor" href="#${id}" aria-label="${label}">#</a></h${token.depth}>\n`;
      },
      code(token: Tokens.Code) {
        const lang = (token.lang ?? '').split(/\s/)[0] ?? '';
        const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
        const label = lang ? ` aria-label="${escapeHtml(codeLabel(lang))}"` : ' aria-label="Code"';
        return `<pre data-copyable tabindex="0"${label}><code${cls}>${escapeHtml(token.text)}\n</code></pre>\n`;
      },
    },
  });
  const html = (marked.parse(markdown, { async: false }) as string)
    .replace(/<table>/g, '<div class="table-wrap" tabindex="0" role="region" aria-label="Table"><table>')
    .replace(/<\/table>/g, '</table></div>');
  return { html, toc };
}

function codeLabel(lang: string): string {
  switch (lang) {
    case 'sh':
    case 'bash':
    case 'shell':
      return 'Shell commands';
    case 'json':
      return 'JSON';
    case 'http':
      return 'HTTP response';
    case 'text':
      return 'Output';
    default:
      return `${lang} code`;
  }
}
