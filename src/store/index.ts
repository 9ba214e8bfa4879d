export type * from './types.js';
export { hashToken, newId, sameHash } from './ids.js';
export { openBlobStore, openStore } from './open.js';
export { backupDataDir, restoreDataDir, type BackupReport, type RestoreReport } from './backup.js';
