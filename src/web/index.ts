/** Shared page kit of the docs and account app hosts: layout, stylesheet, script and icon. */
export { loadPageAssets, type AssetName, type PageAssets, type StaticResponse } from './assets.js';
export { errorSummary, fieldError, invalidAttrs, navigation, renderPage, type FieldError, type Html, type NavItem, type PageOptions } from './layout.js';
