/** One page of a list: newest first, `nextCursor` null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * A list that follows its cursor: `for await (const c of fc.contacts.list())` reads every item, page after page,
 * fetching a page only when the loop gets to it (break out of the loop to stop). `pages()` goes page by page,
 * `page(cursor?)` reads one, `toArray(max?)` collects.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    private readonly startCursor?: string,
  ) {}

  /** One page: the first, or the one `cursor` (a page's `nextCursor`) names. */
  page(cursor: string | undefined = this.startCursor): Promise<Page<T>> {
    return this.fetchPage(cursor);
  }

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor = this.startCursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item (or the first `max`), in order. */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
