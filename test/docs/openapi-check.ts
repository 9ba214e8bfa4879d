import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { API_ROUTES } from '../../src/api/index.js';
import { compileTemplate, openApiPath as openApiPathOf } from '../../src/http/index.js';

/** Checks real answers against the OpenAPI document's schemas (ajv, JSON Schema 2020-12). */
export interface ResponseChecker {
  /** Problems with one answer of the API host; empty when it matches the document. */
  check(method: string, path: string, status: number, contentType: string | undefined, body: Buffer): string[];
  /** Every route and the statuses seen for it. */
  seen: Map<string, Set<number>>;
}

export function responseChecker(document: Record<string, any>): ResponseChecker {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const routes = API_ROUTES.map((route) => ({ route, pattern: compileTemplate(route.path) }));
  const seen = new Map<string, Set<number>>();
  const pointer = (...parts: string[]): string => `openapi.json#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

  return {
    seen,
    check(method, path, status, contentType, body) {
      const match = routes.find(({ route, pattern }) => route.method === method && pattern.test(path));
      if (!match) return status === 404 || status === 405 ? [] : [`${method} ${path}: no such route, yet answered ${status}`];
      const key = `${match.route.method} ${match.route.path}`;
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(status);
      const openApiPath = openApiPathOf(match.route.path);
      const operation = document.paths[openApiPath]?.[method.toLowerCase()];
      if (!operation) return [`${key}: not in the OpenAPI document`];
      let responseKey = String(status);
      let answer = operation.responses[responseKey];
      if (!answer) return [`${key}: answered ${status}, which the OpenAPI document does not list`];
      if (answer.$ref) {
        responseKey = answer.$ref;
        answer = document.components.responses[answer.$ref.split('/').pop()];
      }
      if (!contentType?.startsWith('application/json')) {
        return answer.content?.['*/*'] ? [] : [`${key} ${status}: answered ${contentType}, documented ${Object.keys(answer.content ?? {}).join(', ')}`];
      }
      const schemaPointer = responseKey.startsWith('#')
        ? pointer('components', 'responses', responseKey.split('/').pop()!, 'content', 'application/json', 'schema')
        : pointer('paths', openApiPath, method.toLowerCase(), 'responses', responseKey, 'content', 'application/json', 'schema');
      const validate = ajv.getSchema(schemaPointer);
      if (!validate) return [`${key} ${status}: no JSON schema at ${schemaPointer}`];
      const value = JSON.parse(body.toString('utf8'));
      if (validate(value)) return [];
      return [`${key} ${status}: answer does not match the OpenAPI schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`];
    },
  };
}

/** Validates a value against a component schema (`<!-- schema: Name -->` examples). */
export function componentValidator(document: Record<string, any>): (name: string, value: unknown) => string[] {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  return (name, value) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
    if (!validate) return [`no component schema ${name}`];
    return validate(value) ? [] : [`does not match ${name}: ${ajv.errorsText(validate.errors)}`];
  };
}
