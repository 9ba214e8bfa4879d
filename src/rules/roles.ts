/** Roles on a site, weakest first (SPEC 4.3): viewers read, editors also deploy and roll back, owners also manage. */
export const ROLES = ['viewer', 'editor', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { viewer: 0, editor: 1, owner: 2 };

/** Whether `role` includes everything `least` may do. */
export function hasRole(role: Role, least: Role): boolean {
  return RANK[role] >= RANK[least];
}

/** The stronger of two roles. */
export function strongerRole(a: Role, b: Role): Role {
  return RANK[a] >= RANK[b] ? a : b;
}

/** A role named in any case, or undefined. */
export function parseRole(raw: unknown): Role | undefined {
  const role = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return (ROLES as readonly string[]).includes(role) ? (role as Role) : undefined;
}

/** The second call of a member removal must come this soon (SPEC 8 rule 6). */
export const REMOVAL_CONFIRM_MS = 5 * 60_000;

/** What a caller may do to a site, in the order `permissions` lists them; sites/authorization.ts says what each takes. */
export const SITE_ACTIONS = [
  'read',
  'list_members',
  'deploy',
  'rollback',
  'rename',
  'delete',
  'manage_members',
  'promote',
  'set_access',
  'delete_revision',
] as const;
export type SiteAction = (typeof SITE_ACTIONS)[number];
