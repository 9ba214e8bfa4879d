export { createIngestPool, type IngestPool, type IngestPoolOptions } from './pool.js';
export type {
  Announcement,
  AnnouncementMessage,
  AnalyzeResult,
  AnalyzeTask,
  BadgeTask,
  ByteRange,
  CompressReply,
  CompressResult,
  CompressTask,
  FileReference,
  IngestedFile,
  IngestError,
  IngestErrorCode,
  IngestLimits,
  JsonDeployFields,
  RejudgedContent,
  SiteFile,
  SiteRulesLimits,
  UnpackBody,
  UnpackOptions,
  UnpackResult,
  UnpackTask,
} from './types.js';
export { ANNOUNCE_AT_ONCE, ANNOUNCE_LAST_FEW } from './types.js';
export { checkArchivePath, MAX_PATH_BYTES, type ArchivePathResult } from './archive-path.js';
export { checkDeployPaths, copiedJournal, type CheckedPaths } from './collector.js';
export { isBrotliName } from './leak-guard.js';
export { linkCheckShares } from './site-analysis.js';
