import type { Schema } from '../../contract/index.js';
import type { ErrorCode } from '../../errors.js';
import type { ApiRoute, ApiTag, Credential } from '../route.js';

/** What routes of one group share: their tag and credentials, leading parameters, and errors. */
export interface RouteGroup {
  tag: ApiTag;
  auth: readonly Credential[];
  parameters?: readonly Schema[];
  errors?: readonly ErrorCode[];
}

/** A route of a group, declaring only what is its own. */
export type GroupRoute = Omit<ApiRoute, 'tag' | 'auth' | 'errors'> & { errors?: readonly ErrorCode[] };

/**
 * Routes that share their tag, credentials, leading parameters (a site's name) and errors (those
 * of every route on one site) are declared with only what is their own; the group adds the rest,
 * its parameters before the route's and its errors after them.
 */
export function routeGroup(group: RouteGroup): (route: GroupRoute) => ApiRoute {
  return ({ parameters, errors, ...route }) => {
    const allParameters = [...(group.parameters ?? []), ...(parameters ?? [])];
    return {
      ...route,
      tag: group.tag,
      auth: group.auth,
      ...(allParameters.length > 0 ? { parameters: allParameters } : {}),
      errors: [...(errors ?? []), ...(group.errors ?? [])],
    };
  };
}
