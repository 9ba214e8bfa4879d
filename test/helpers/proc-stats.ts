import { readdirSync, readFileSync } from 'node:fs';

/** Resident memory of a process, in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Open file descriptors of a process (sockets, files, pipes). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}
