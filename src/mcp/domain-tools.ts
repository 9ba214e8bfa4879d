import { SHAPES } from '../contract/index.js';
import { changes, reads, type ToolSpec } from './tool-spec.js';
import { bodyInputs, input, siteName, siteOnly } from './schemas.js';

/** Custom domains over MCP: each tool is one domain operation, the REST endpoints' own. */

const domain = { type: 'string', minLength: 1, maxLength: 253, description: 'The domain, e.g. "www.example.org".' };

export function domainToolSpecs(): ToolSpec[] {
  return [
    {
      name: 'list_domains',
      title: 'List custom domains',
      description:
        'The custom domains of a site with their status (pending, active, failed, suspended, or taken: another site verified it first; "reason" says why) and the DNS records each needs.',
      inputSchema: siteOnly,
      outputSchema: SHAPES.DomainList,
      annotations: reads,
      run: async ({ ops, caller }, args) => ops.domains.list(caller, String(args.site)),
    },
    {
      name: 'add_domain',
      title: 'Add custom domain',
      description:
        'Attaches a domain the user owns to a site (owner role). The answer lists the DNS records to create (a TXT record that proves control, and a CNAME or ALIAS to the site); ' +
        'tell the user exactly those, then call verify_domain once they exist. Calling it again for a domain the site has sets "primary" (of example.org and www.example.org, the one the other redirects to) ' +
        'and "redirect_site_address" (the site’s own address redirects to the primary domain too).',
      inputSchema: bodyInputs.addDomain,
      outputSchema: SHAPES.DomainResult,
      annotations: changes(false),
      run: async ({ ops, caller }, args) =>
        (await ops.domains.add(caller, String(args.site), { domain: args.domain, primary: args.primary, redirect_site_address: args.redirect_site_address }))
          .view,
    },
    {
      name: 'verify_domain',
      title: 'Verify custom domain',
      description:
        'Looks the domain’s TXT record up now. The answer has the new status; when it is not active, "reason" says what the lookup found. Records can take minutes to appear after they are created.',
      inputSchema: input({ site: siteName, domain }, ['site', 'domain']),
      outputSchema: SHAPES.DomainResult,
      annotations: changes(false),
      run: async ({ ops, caller }, args) => ops.domains.verify(caller, String(args.site), String(args.domain)),
    },
    {
      name: 'remove_domain',
      title: 'Remove custom domain',
      description: 'Detaches a domain from a site (owner role); it stops being served at once. Check with the user first.',
      inputSchema: input({ site: siteName, domain }, ['site', 'domain']),
      outputSchema: SHAPES.DomainRemoved,
      annotations: changes(true),
      run: async ({ ops, caller }, args) => ops.domains.remove(caller, String(args.site), String(args.domain)),
    },
  ];
}
