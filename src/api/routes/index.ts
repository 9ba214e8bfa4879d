import type { ApiRoute } from '../route.js';
import { deployRoutes } from './deploy.js';
import { domainRoutes } from './domains.js';
import { eventRoutes } from './events.js';
import { fileRoutes } from './files.js';
import { peopleRoutes } from './people.js';
import { siteRoutes } from './sites.js';

/**
 * Every route of the REST API (SPEC 4), each declared once: the dispatcher serves exactly these,
 * the OpenAPI document describes them, and docs/sites-api.md and docs/publishing.md explain them
 * (test/api/routes.test.ts holds all four together).
 */
export const API_ROUTES: readonly ApiRoute[] = [...deployRoutes, ...siteRoutes, ...fileRoutes, ...peopleRoutes, ...domainRoutes, ...eventRoutes];
