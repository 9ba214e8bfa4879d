import { describe, expect, it } from 'vitest';
import { isExecutableFile } from '../../src/ingest/executables.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

// A minimal PE head: `MZ`, zeros, e_lfanew = 0x40 and `PE\0\0` there.
const PE_HEAD = (() => {
  const head = new Uint8Array(128);
  head.set([0x4d, 0x5a, 0x90, 0x00]);
  head.set([0x40, 0, 0, 0], 0x3c);
  head.set([0x50, 0x45, 0, 0], 0x40);
  return head;
})();
const EMPTY = new Uint8Array();

describe('isExecutableFile', () => {
  it.each([
    ['an ELF binary', 'tool', bytes(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0)],
    ['a PE file', 'image.png', PE_HEAD],
    ['a DOS executable', 'data.bin', bytes(0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00)],
    ['a 32-bit Mach-O', 'a', bytes(0xfe, 0xed, 0xfa, 0xce, 0)],
    ['a 64-bit Mach-O', 'a', bytes(0xfe, 0xed, 0xfa, 0xcf, 0)],
    ['a little-endian 32-bit Mach-O', 'a', bytes(0xce, 0xfa, 0xed, 0xfe, 0)],
    ['a little-endian 64-bit Mach-O', 'a', bytes(0xcf, 0xfa, 0xed, 0xfe, 0)],
    ['a fat Mach-O or Java class', 'Main.class', bytes(0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2)],
    ['a fat 64-bit Mach-O', 'a', bytes(0xca, 0xfe, 0xba, 0xbf)],
    ['an RPM package by bytes', 'pkg.txt', bytes(0xed, 0xab, 0xee, 0xdb, 3, 0)],
    ['a Debian package by bytes', 'pkg.txt', text('!<arch>\ndebian-binary   1342943816  0     0     100644  4         `\n')],
    ['a .exe name', 'setup.exe', EMPTY],
    ['an uppercase .EXE name', 'SETUP.EXE', EMPTY],
    ['a double extension', 'invoice.pdf.exe', EMPTY],
    ['a trailing dot', 'setup.exe.', EMPTY],
    ['a trailing space', 'setup.exe ', EMPTY],
    ['a nested .dll', 'bin/lib/x.dll', EMPTY],
    ['a .msi', 'a.msi', EMPTY],
    ['a .dmg', 'a.dmg', EMPTY],
    ['a .pkg', 'a.pkg', EMPTY],
    ['a .deb', 'a.deb', EMPTY],
    ['a .rpm', 'a.rpm', EMPTY],
    ['a .apk', 'app.apk', text('PK\u0003\u0004')],
    ['an .AppImage', 'tool.AppImage', EMPTY],
    ['a .bat', 'run.bat', text('@echo off\r\n')],
    ['a .cmd', 'run.cmd', EMPTY],
    ['a .ps1', 'install.ps1', text('Write-Host hi')],
    ['a .vbs', 'a.vbs', EMPTY],
    ['a .jar', 'a.jar', EMPTY],
    ['a .scr', 'a.scr', EMPTY],
    ['an .hta', 'a.hta', EMPTY],
    ['a .lnk', 'a.lnk', EMPTY],
    ['an .msix', 'a.msix', EMPTY],
  ])('blocks %s', (_name, path, head) => {
    expect(isExecutableFile(path, head)).toBe(true);
  });

  it.each([
    ['an HTML page', 'index.html', text('<!doctype html>')],
    ['a CSV starting with MZ', 'countries.csv', text('MZ,Mozambique\nMW,Malawi\n')],
    ['a text file that is just MZ', 'a.txt', text('MZ')],
    ['a PNG', 'a.png', bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)],
    ['a zip download', 'site.zip', text('PK\u0003\u0004')],
    ['a WebAssembly module', 'app.wasm', bytes(0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0)],
    ['a PDF', 'a.pdf', text('%PDF-1.7')],
    ['an empty file', 'empty', EMPTY],
    ['a shell script', 'install.sh', text('#!/bin/sh\n')],
    ['a .com file name', 'example.com', EMPTY],
    ['an exe-like folder', 'setup.exe/readme.txt', text('hi')],
    ['a name containing exe', 'exe.html', EMPTY],
    ['a truncated ELF magic', 'a', bytes(0x7f, 0x45, 0x4c)],
    ['a plain ar archive', 'lib.a', text('!<arch>\nfoo.o/')],
  ])('allows %s', (_name, path, head) => {
    expect(isExecutableFile(path, head)).toBe(false);
  });
});
