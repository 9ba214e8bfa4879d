/**
 * `plinth load`: the load suite operators point at their own deployment. It talks to Plinth only
 * through its public API and its sites, and imports nothing else of the service, so it can ship
 * with the command line on its own.
 */
export { loadCommand, LOAD_USAGE, type LoadCommandIo } from './command.js';
