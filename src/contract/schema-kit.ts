/**
 * Builders for JSON Schemas whose TypeScript type can be derived from them (`JsonOf`): the
 * answers in shapes.ts, the MCP tools' inputs and the OpenAPI document are written with these.
 * Objects list every property they allow (`additionalProperties: false`).
 */

/** One JSON Schema node. */
export type Schema = { readonly [keyword: string]: unknown };

export type StringSchema = { readonly type: 'string' } & Schema;
type IntegerSchema = { readonly type: 'integer' } & Schema;
type BooleanSchema = { readonly type: 'boolean' } & Schema;
type ObjectSchema<P, R> = { readonly type: 'object'; readonly properties: P; readonly required: R; readonly additionalProperties: false } & Schema;

const describe = (description: string | undefined): Schema => (description ? { description } : {});

export const str = (description?: string, extra: Schema = {}): StringSchema => ({ type: 'string', ...describe(description), ...extra });
export const int = (description?: string, extra: Schema = {}): IntegerSchema => ({ type: 'integer', minimum: 0, ...describe(description), ...extra });
export const bool = (description?: string): BooleanSchema => ({ type: 'boolean', ...describe(description) });
export const time = (description?: string): StringSchema => str(description, { format: 'date-time' });
export const enumOf = <const E extends readonly string[]>(values: E, description?: string): { readonly type: 'string'; readonly enum: E } & Schema => ({
  type: 'string',
  enum: values,
  ...describe(description),
});
export const constant = <const C>(value: C, description?: string): { readonly const: C } & Schema => ({ const: value, ...describe(description) });
export const arrayOf = <const I extends Schema>(items: I, description?: string): { readonly type: 'array'; readonly items: I } & Schema => ({
  type: 'array',
  items,
  ...describe(description),
});
export const nullable = <const S extends Schema>(schema: S, description?: string): { readonly oneOf: readonly [S, { readonly type: 'null' }] } & Schema => ({
  oneOf: [schema, { type: 'null' }],
  ...describe(description),
});
/** An object listing every property it may have; `required` defaults to all of them. */
export function object<const P extends Record<string, Schema>, const R extends readonly (keyof P & string)[] = readonly (keyof P & string)[]>(
  properties: P,
  required?: R,
  description?: string,
): ObjectSchema<P, R> {
  return { type: 'object', properties, required: (required ?? Object.keys(properties)) as R, additionalProperties: false, ...describe(description) };
}

/** The value a schema describes, as a TypeScript type. */
export type JsonOf<S> = S extends { readonly oneOf: readonly (infer O)[] }
  ? JsonOf<O>
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly enum: readonly (infer E)[] }
      ? E
      : S extends { readonly type: 'string' }
        ? string
        : S extends { readonly type: 'integer' }
          ? number
          : S extends { readonly type: 'boolean' }
            ? boolean
            : S extends { readonly type: 'null' }
              ? null
              : S extends { readonly type: 'array'; readonly items: infer I }
                ? JsonOf<I>[]
                : S extends { readonly type: 'object'; readonly properties: infer P; readonly required: readonly (infer R)[] }
                  ? Flatten<
                      { -readonly [K in keyof P as K extends R ? K : never]: JsonOf<P[K]> } & {
                        -readonly [K in keyof P as K extends R ? never : K]?: JsonOf<P[K]>;
                      }
                    >
                  : unknown;
type Flatten<T> = { [K in keyof T]: T[K] };
