/**
 * The content codings a deploy stores precompressed variants in, best first: ingest makes them,
 * the store keeps, backs up and uploads them, and serving prefers them in this order at equal
 * weight (br is smaller for the same text).
 */
export type Encoding = 'br' | 'gzip';

export const ENCODINGS: readonly Encoding[] = ['br', 'gzip'];
