export type * from './types.js';
export { hashToken, newId } from './ids.js';
export { openBlobStore, openStore } from './open.js';
export { backupDataDir, restoreDataDir, type BackupReport, type RestoreReport } from './backup.js';
