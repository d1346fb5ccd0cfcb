/**
 * The import's column mapping, worked out in the browser: a CSV's header and first rows (parsed by papaparse from
 * the start of the file, nothing uploaded yet), a guess of what each column is from its name (the names of the
 * common exports, as the server knows them: src/audience/contacts/contacts.import.ts KNOWN_COLUMNS), and the
 * `?columns=` map of POST /v1/contacts/imports built from the person's choices.
 */
import Papa from 'papaparse';

/** What a column can become. `property` takes a name of its own; `skip` leaves the column out. */
export type Target =
  'skip' | 'email' | 'firstName' | 'lastName' | 'name' | 'status' | 'tags' | 'timezone' | 'attributes' | 'property';

export interface Choice {
  target: Target;
  /** The property's name, when target is `property`. */
  property: string;
}

/** The choices offered, in this order. */
export const TARGETS: { value: Target; label: string; short: string }[] = [
  { value: 'email', label: 'Email address', short: 'email address' },
  { value: 'firstName', label: 'First name', short: 'first name' },
  { value: 'lastName', label: 'Last name', short: 'last name' },
  { value: 'name', label: 'Full name (split into first and last)', short: 'full name' },
  { value: 'status', label: 'Subscription status', short: 'status' },
  { value: 'tags', label: 'Tags (separated by commas)', short: 'tags' },
  { value: 'timezone', label: 'Time zone', short: 'time zone' },
  { value: 'property', label: 'Custom property…', short: 'property' },
  { value: 'attributes', label: 'Several properties (a JSON object)', short: 'properties (JSON)' },
  { value: 'skip', label: 'Don’t import', short: 'not imported' },
];

/** The fields a file can have only one column of. */
const SINGLE: Target[] = ['email', 'firstName', 'lastName', 'name', 'status', 'tags', 'timezone', 'attributes'];

/** Header names compared without case, spaces, `-`, `_` or `.` (as the server compares them). */
export function headerKey(name: string): string {
  return name.toLowerCase().replace(/[\s\-_.]+/g, '');
}

/** The names of ours and of the common exports (Mailchimp, Kit, Listmonk, spreadsheets). */
const KNOWN: Record<string, Target> = {
  email: 'email',
  emailaddress: 'email',
  emailaddr: 'email',
  mail: 'email',
  mailaddress: 'email',
  subscriberemail: 'email',
  contactemail: 'email',
  firstname: 'firstName',
  fname: 'firstName',
  first: 'firstName',
  givenname: 'firstName',
  forename: 'firstName',
  lastname: 'lastName',
  lname: 'lastName',
  last: 'lastName',
  surname: 'lastName',
  familyname: 'lastName',
  name: 'name',
  fullname: 'name',
  status: 'status',
  state: 'status',
  subscriptionstatus: 'status',
  attributes: 'attributes',
  attribs: 'attributes',
  tags: 'tags',
  tag: 'tags',
  labels: 'tags',
  timezone: 'timezone',
  tz: 'timezone',
};

export const PROPERTY_KEY = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

/**
 * A header as a property name: as it is when it is one, else its words in camelCase ("Phone Number" →
 * "phoneNumber"), as the server names a column it does not know; "" when nothing usable is left.
 */
export function propertyNameFor(header: string): string {
  if (PROPERTY_KEY.test(header)) return header;
  const words = header.split(/[^A-Za-z0-9]+/).filter(Boolean);
  let key = words
    .map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
  if (/^[0-9]/.test(key)) key = `field${key}`;
  return key.slice(0, 64);
}

const looksLikeEmail = (v: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim());

/**
 * The first guess for every column: by its name; a column no name matches becomes a property named after it. When
 * no name says "email", the first column whose sample values are all addresses is the email column.
 */
export function guessChoices(header: string[], rows: string[][]): Choice[] {
  const taken = new Set<Target>();
  const choices = header.map((h): Choice => {
    const known = h ? KNOWN[headerKey(h)] : undefined;
    if (known && !taken.has(known)) {
      taken.add(known);
      return { target: known, property: '' };
    }
    const property = propertyNameFor(h);
    return property ? { target: 'property', property } : { target: 'skip', property: '' };
  });
  if (!taken.has('email')) {
    const i = header.findIndex((_, c) => {
      const values = rows.map((r) => r[c] ?? '').filter((v) => v.trim() !== '');
      return values.length > 0 && values.every(looksLikeEmail);
    });
    if (i !== -1) choices[i] = { target: 'email', property: '' };
  }
  return choices;
}

/** What is wrong with the choices, by column (plain words), and overall (no email column). */
export function checkChoices(
  header: string[],
  choices: Choice[],
): { byColumn: (string | null)[]; overall: string | null } {
  const byColumn: (string | null)[] = choices.map(() => null);
  const firstOf = new Map<string, number>();
  choices.forEach((c, i) => {
    if (c.target === 'skip') return;
    if (header.indexOf(header[i]!) !== i || header.lastIndexOf(header[i]!) !== i) {
      // The map is by header name: two columns of one name can only be left out together.
      byColumn[i] = header[i]
        ? `Another column is also called “${header[i]}”: rename one in the file, or don’t import them.`
        : 'Several columns have no name in the file: name them in the file, or don’t import them.';
      return;
    }
    if (c.target === 'property') {
      const name = c.property.trim();
      if (!name) {
        byColumn[i] = 'Name the property, or choose “Don’t import”.';
        return;
      }
      if (!PROPERTY_KEY.test(name)) {
        byColumn[i] =
          'A property name starts with a letter and has only letters, digits and _ (no spaces), up to 64 characters.';
        return;
      }
    }
    const slot = c.target === 'property' ? `property:${c.property.trim()}` : c.target;
    const first = firstOf.get(slot);
    if (first !== undefined) {
      const what =
        c.target === 'property'
          ? `the property “${c.property.trim()}”`
          : `the ${TARGETS.find((t) => t.value === c.target)!.short}`;
      byColumn[i] = `Column “${header[first] || first + 1}” is already ${what}: choose something else for this one.`;
      return;
    }
    if (SINGLE.includes(c.target) || c.target === 'property') firstOf.set(slot, i);
  });
  const overall = choices.some((c) => c.target === 'email')
    ? null
    : 'Choose the column that holds the email addresses: every contact needs one.';
  return { byColumn, overall };
}

/**
 * The `?columns=` map for these choices: every column named, so that the server does what the table shows
 * (a property as `properties.<name>`, which no field name can ever mean; a skipped column as null).
 */
export function columnsParam(header: string[], choices: Choice[]): Record<string, string | null> {
  const map: Record<string, string | null> = {};
  header.forEach((h, i) => {
    const c = choices[i]!;
    map[h] = c.target === 'skip' ? null : c.target === 'property' ? `properties.${c.property.trim()}` : c.target;
  });
  return map;
}

/** "becomes …" for a column, in plain words. */
export function describeChoice(c: Choice): string {
  if (c.target === 'skip') return 'not imported';
  if (c.target === 'property') return c.property.trim() ? `property “${c.property.trim()}”` : 'property (unnamed)';
  return TARGETS.find((t) => t.value === c.target)!.short;
}

/** The field delimiter of the first line: `,`, `;` or a tab, whichever occurs most outside quotes (as the server picks it). */
export function detectDelimiter(sample: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of sample) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch]++;
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';';
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t';
  return ',';
}

export interface CsvPreview {
  /** The header's names, trimmed (the keys of the column map). */
  header: string[];
  /** Up to PREVIEW_ROWS data rows, trimmed. */
  rows: string[][];
}

export const PREVIEW_ROWS = 5;
/** Enough of the file for a header and five rows; a longer file is only read this far. */
const HEAD_BYTES = 256 * 1024;

/** The header and first rows of a CSV file, read in the browser; throws a plain-words Error when it has none. */
export async function previewCsv(file: File): Promise<CsvPreview> {
  const head = await file.slice(0, HEAD_BYTES).text();
  const text = head.charCodeAt(0) === 0xfeff ? head.slice(1) : head;
  const parsed = Papa.parse<string[]>(text, {
    delimiter: detectDelimiter(text),
    // Blank lines are skipped, as the server skips them (papaparse's `preview` would count them: the whole head is parsed).
    skipEmptyLines: 'greedy',
  });
  const records = parsed.data.map((r) => r.map((cell) => cell.trim()));
  // The last row read may be cut off by the end of what was read: it is not shown.
  if (file.size > HEAD_BYTES && records.length > 1) records.pop();
  const [header, ...rows] = records.slice(0, PREVIEW_ROWS + 1);
  if (!header || header.every((h) => h === ''))
    throw new Error('The file is empty: its first line must name the columns (for example email, first name).');
  return { header, rows: rows.slice(0, PREVIEW_ROWS) };
}

/** "1 row", "2 rows": the console's one plural helper (lib/format.ts). */
export { count as countOf } from '../../lib/format.js';
