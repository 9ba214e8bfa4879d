import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Schema } from './schema-kit.js';

/**
 * The one check of a request body against its shape, and the one wording of what is wrong with
 * it: REST routes, MCP tools and the ingest worker's JSON deploy all answer a body that breaks its
 * shape with the same sentence (`revision must be a revision id (rev_…).`).
 */

/**
 * The first thing wrong with a body: a sentence, and the field it is about as the body spells it
 * (`files[2].encoding`; absent when the body as a whole is wrong), for the error's `details.field`.
 */
export interface BodyProblem {
  message: string;
  field?: string;
}

/** `undefined` when the value fits the shape, else the first thing wrong with it. */
export type BodyCheck = (value: unknown) => BodyProblem | undefined;

// Made on first use (importing a module does nothing); one per thread, shared by every shape.
// `verbose`: an error carries the schema it broke, so a wrong type can name the allowed values.
// Formats (`email`) are documentation here: the operations check them with the rules, whose
// refusal says what is wrong with the address rather than that a format did not match.
let ajv: Ajv | undefined;
// Compiled checks by their shape's JSON: each server builds its routes and tools afresh, with
// equal shapes in new objects, which Ajv would compile (and keep) again for every server a
// process starts (the tests start hundreds).
const compiled = new Map<string, ValidateFunction>();

/** The check of one shape; `whole` names the value itself in a sentence ("The body", "The arguments"). */
export function compileBodyCheck(shape: Schema, whole = 'The body'): BodyCheck {
  ajv ??= new Ajv({ allErrors: false, strict: true, verbose: true, validateFormats: false });
  const key = JSON.stringify(shape);
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(shape)));
  const check = validate;
  return (value) => (check(value) ? undefined : problemOf(check.errors?.[0], whole));
}

/** A problem's `details` for the error answer: the field it names, if any. */
export function problemDetails(problem: BodyProblem): { field: string } | undefined {
  return problem.field === undefined ? undefined : { field: problem.field };
}

function problemOf(error: ErrorObject | undefined, whole: string): BodyProblem {
  const message = describeSchemaError(error, whole);
  const field = error === undefined ? '' : fieldName(error.instancePath, childNamed(error));
  return field === '' ? { message } : { message, field };
}

/** The property a `required` or `additionalProperties` error is about, below its path. */
function childNamed(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return String(params.missingProperty);
  if (error.keyword === 'additionalProperties') return String(params.additionalProperty);
  return undefined;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  array: 'an array',
  object: 'an object',
  boolean: 'true or false',
  integer: 'a whole number',
};

// `/files/2/encoding` → `files[2].encoding`.
function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  let name = '';
  for (const part of parts) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    name += /^\d+$/.test(key) ? `[${key}]` : name === '' ? key : `.${key}`;
  }
  return name;
}

const listed = (values: unknown[]): string => values.map((v) => JSON.stringify(v)).join(' or ');

/** What a schema error means, as a sentence naming the field as the body spells it. */
export function describeSchemaError(error: ErrorObject | undefined, whole = 'The body'): string {
  if (error === undefined) return `${whole} is invalid.`;
  const field = fieldName(error.instancePath) || whole;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldName(error.instancePath, childNamed(error))} is required.`;
    case 'additionalProperties':
      return `${fieldName(error.instancePath, childNamed(error))} is not an allowed field.`;
    case 'minProperties':
      return `${field} needs at least one field.`;
    case 'type': {
      const allowed = (error.parentSchema as { enum?: unknown[] } | undefined)?.enum;
      if (allowed) return `${field} must be ${listed(allowed)}.`;
      return `${field} must be ${TYPE_WORDS[String(params.type)] ?? String(params.type)}.`;
    }
    case 'enum':
      return `${field} must be ${listed(params.allowedValues as unknown[])}.`;
    case 'pattern':
      if (params.pattern === '^rev_') return `${field} must be a revision id (rev_…).`;
      if (field.endsWith('.sha256')) return `${field} must be 64 lower-case hex digits.`;
      return field === 'site'
        ? 'site must be a site name: 1 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen.'
        : `${field} has an invalid format.`;
    case 'minLength':
      return params.limit === 1 ? `${field} must not be empty.` : `${field} must be at least ${String(params.limit)} characters.`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters.`;
    default:
      return `${field} ${error.message ?? 'is invalid'}.`;
  }
}
