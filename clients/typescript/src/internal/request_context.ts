// The call's request context, as the Mastra API's `RequestContext` (a map with `get`).
export class RequestContext {
  private readonly values: Map<string, unknown>;

  constructor(entries: Record<string, unknown> = {}) {
    this.values = new Map(Object.entries(entries));
  }

  get<T = unknown>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  set(key: string, value: unknown): void {
    this.values.set(key, value);
  }

  entries(): IterableIterator<[string, unknown]> {
    return this.values.entries();
  }

  toJSON(): Record<string, unknown> {
    return Object.fromEntries(this.values);
  }
}

