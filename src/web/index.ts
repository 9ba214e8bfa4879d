/** Shared page kit of the docs and account app hosts: layout, stylesheet and script, security headers. */
export { loadPageAssets, matchesEtag, type AssetName, type PageAssets, type StaticResponse } from './assets.js';
export { errorSummary, fieldError, invalidAttrs, navigation, renderPage, type FieldError, type Html, type NavItem, type PageOptions } from './layout.js';
export { contentSecurityPolicy, securityHeaders, type SecurityHeaderOptions } from './security.js';
