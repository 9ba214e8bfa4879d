import type { Guide } from './guides.js';
import { sections } from './pages.js';

/**
 * `/llms.txt` (the llms.txt format: an H1, a one-paragraph blockquote, then H2 sections of
 * Markdown links with a note each) and `/llms-full.txt`, every guide in one file.
 */

export function llmsTxt(guides: readonly Guide[], docsUrl: string): string {
  const landing = guides.find((guide) => guide.slug === 'index');
  const lines = [
    '# Plinth',
    '',
    `> ${landing?.summary ?? 'Plinth publishes a static website from an uploaded folder.'}`,
    '',
    'Start with the agent guide: it covers publishing, keeping `.service.json`, handing the claim link to your user, updating without a conflict and rolling back; the errors page lists every error code and what to do. All links below are Markdown.',
    '',
  ];
  const groups = sections(guides).map(({ section, guides: list }) => ({
    section,
    links: list.map((guide) => `- [${guide.title}](${docsUrl}/${guide.slug}.md): ${guide.summary}`),
  }));
  let reference = groups.find((group) => group.section === 'Reference');
  if (!reference) groups.push((reference = { section: 'Reference', links: [] }));
  reference.links.push(
    `- [OpenAPI document](${docsUrl}/openapi.json): OpenAPI 3.1 description of the whole /v1 REST API, with request, response and error schemas.`,
    `- [All guides in one file](${docsUrl}/llms-full.txt): every guide, concatenated.`,
  );
  // "Optional" means "may be skipped" in llms.txt, so it goes last.
  groups.sort((a, b) => Number(a.section === 'Optional') - Number(b.section === 'Optional'));
  for (const group of groups) lines.push(`## ${group.section}`, '', ...group.links, '');
  return lines.join('\n');
}

export function llmsFullTxt(guides: readonly Guide[], docsUrl: string): string {
  const parts = [llmsTxt(guides, docsUrl).trimEnd()];
  for (const guide of guides) {
    if (guide.slug === 'index') continue;
    parts.push(`<!-- ${docsUrl}/${guide.slug}.md -->\n\n${guide.markdown.trimEnd()}`);
  }
  return `${parts.join('\n\n---\n\n')}\n`;
}
