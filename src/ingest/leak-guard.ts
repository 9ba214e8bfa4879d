// The leak guard (SPEC 4.1 rule 6) for one file: its bytes decoded as text (text-encoding.ts)
// and scanned (secrets.ts). Runs in the ingest worker, on bytes already in memory.
import { secretFound } from './rejection.js';
import { scanForSecrets } from './secrets.js';
import { decodeText } from './text-encoding.js';

export interface LeakGuard {
  /** Throws `DeployRejected` for a secret. */
  check(path: string, bytes: Uint8Array): void;
}

export function createLeakGuard(): LeakGuard {
  function check(path: string, bytes: Uint8Array): void {
    const text = decodeText(bytes);
    if (text === undefined) return;
    const finding = scanForSecrets(text);
    if (finding) throw secretFound(path, finding.line, finding.kind);
  }

  return { check };
}
