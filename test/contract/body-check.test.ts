import { describe, expect, it } from 'vitest';
import { compileBodyCheck, JsonDeploy, type BodyProblem } from '../../src/contract/index.js';

// The one check of a body against its shape: the sentence a caller reads, and the field it names
// for `details.field`, spelled as the body spells it.
const check = compileBodyCheck(JsonDeploy);

const CASES: Array<[string, unknown, BodyProblem | undefined]> = [
  ['a body that fits', { files: [{ path: 'index.html', content: 'x' }] }, undefined],
  ['not an object', 'files', { message: 'The body must be an object.' }],
  ['a missing field', {}, { message: 'files is required.', field: 'files' }],
  ['a field of another type', { files: 'index.html' }, { message: 'files must be an array.', field: 'files' }],
  ['a field it does not know', { files: [], color: 'red' }, { message: 'color is not an allowed field.', field: 'color' }],
  ['a missing field inside a list', { files: [{ content: 'x' }] }, { message: 'files[0].path is required.', field: 'files[0].path' }],
  [
    'a value outside its list',
    { files: [{ path: 'a', content: 'x', encoding: 'hex' }] },
    { message: 'files[0].encoding must be "utf8" or "base64".', field: 'files[0].encoding' },
  ],
  ['a value of another form', { files: [], manifest: 'm 1' }, { message: 'manifest has an invalid format.', field: 'manifest' }],
  ['true or false', { files: [], patch: 'yes' }, { message: 'patch must be true or false.', field: 'patch' }],
];

describe('the body check', () => {
  it.each(CASES)('%s', (_, body, expected) => {
    expect(check(body)).toEqual(expected);
  });
});
