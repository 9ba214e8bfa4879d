/** Wrong arguments: the command prints its usage text and exits 2. */
export class UsageError extends Error {}
