// SPEC 4.1 rule 7: anonymous deploys may not host programs or installers, the staple of malware
// drops on free hosting. A file is blocked by its first bytes (renaming does not help) or by its
// name (scripts and installers whose formats have no reliable magic number).

const BLOCKED_EXTENSIONS = new Set([
  'exe',
  'dll',
  'msi',
  'msix',
  'msp',
  'appx',
  'dmg',
  'pkg',
  'deb',
  'rpm',
  'apk',
  'ipa',
  'appimage',
  'bat',
  'cmd',
  'ps1',
  'vbs',
  'vbe',
  'wsf',
  'hta',
  'lnk',
  'cpl',
  'jar',
  'scr',
]);

// Mach-O thin binaries in both byte orders and widths, then fat (universal) binaries. `cafebabe`
// is also the Java class file magic; blocking those too is intended, they are programs as well.
const MAGICS: readonly (readonly number[])[] = [
  [0x7f, 0x45, 0x4c, 0x46], // ELF (Linux, BSD, Android native code, AppImage)
  [0xfe, 0xed, 0xfa, 0xce],
  [0xfe, 0xed, 0xfa, 0xcf],
  [0xce, 0xfa, 0xed, 0xfe],
  [0xcf, 0xfa, 0xed, 0xfe],
  [0xca, 0xfe, 0xba, 0xbe],
  [0xca, 0xfe, 0xba, 0xbf],
  [0xed, 0xab, 0xee, 0xdb], // RPM package
  [...new TextEncoder().encode('!<arch>\ndebian-binary')], // Debian package (an `ar` archive)
];

function startsWith(head: Uint8Array, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((byte, i) => head[i] === byte);
}

// `MZ` alone is too weak: a text file may start with it (Mozambique's country code in a CSV).
// Every DOS or PE header has NUL bytes in its first 64 bytes and text never does, so `MZ` plus a
// NUL there is an executable; this also covers PE files whose `PE\0\0` lies beyond the head.
function isDosOrPe(head: Uint8Array): boolean {
  return head[0] === 0x4d && head[1] === 0x5a && head.subarray(0, 64).includes(0);
}

function extensionOf(path: string): string {
  // Windows drops trailing dots and spaces, so `setup.exe. ` is saved as `setup.exe`.
  const name = (path.split('/').pop() ?? '').replace(/[. ]+$/, '').toLowerCase();
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1);
}

// `head` is the first bytes of the file (up to 4 KB; fewer for a short file).
export function isExecutableFile(path: string, head: Uint8Array): boolean {
  if (BLOCKED_EXTENSIONS.has(extensionOf(path))) return true;
  return isDosOrPe(head) || MAGICS.some((magic) => startsWith(head, magic));
}
