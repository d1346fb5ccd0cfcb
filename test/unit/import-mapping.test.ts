import { describe, expect, it } from 'vitest';
import { checkColumnMap, csvColumns } from '../../src/audience/contacts/contacts.import.js';
import {
  checkChoices,
  columnsParam,
  countOf,
  describeChoice,
  guessChoices,
  previewCsv,
  propertyNameFor,
  type Choice,
} from '../../console/src/pages/Contacts/import-mapping.js';

/** The console's import mapping (console/src/pages/Contacts/import-mapping.ts), checked against the server's reading. */

const targets = (choices: Choice[]) =>
  choices.map((c) => (c.target === 'property' ? `property:${c.property}` : c.target));

describe("the console's import mapping", () => {
  it('guesses the fields of the common exports from their header names', () => {
    const header = [
      'Email Address',
      'First Name',
      'LNAME',
      'e-mail',
      'Phone Number',
      'MEMBER_RATING',
      'Sign-up source',
      '',
      '2nd line',
      'status',
    ];
    expect(targets(guessChoices(header, []))).toEqual([
      'email',
      'firstName',
      'lastName',
      // One email column: the second "email" becomes a property.
      'property:eMail',
      'property:phoneNumber',
      'property:MEMBER_RATING',
      'property:signUpSource',
      'skip',
      'property:field2ndLine',
      'status',
    ]);
    for (const h of ['email', 'E-mail', 'EMAIL_ADDRESS', 'Email Address', 'mail'])
      expect(guessChoices([h], [])[0]!.target, h).toBe('email');
    for (const h of ['first_name', 'First Name', 'FNAME', 'firstName', 'Given name'])
      expect(guessChoices([h], [])[0]!.target, h).toBe('firstName');
    for (const h of ['last_name', 'Last Name', 'LNAME', 'Surname', 'family-name'])
      expect(guessChoices([h], [])[0]!.target, h).toBe('lastName');
    expect(guessChoices(['Name'], [])[0]!.target).toBe('name');
    expect(guessChoices(['attributes'], [])[0]!.target).toBe('attributes');
  });

  it('without an email header, the first column whose values are all addresses is the email column', () => {
    const choices = guessChoices(
      ['Who', 'Contact', 'Backup'],
      [
        ['Ana', 'ana@example.com', 'x@example.com'],
        ['Bo', '', 'nope'],
        ['Cy', 'cy@example.org', ''],
      ],
    );
    expect(targets(choices)).toEqual(['property:Who', 'email', 'property:Backup']);
  });

  it('names a property after its header, as the server would', () => {
    expect(propertyNameFor('plan')).toBe('plan');
    expect(propertyNameFor('Company Name')).toBe('companyName');
    expect(propertyNameFor('Plan (tier)')).toBe('planTier');
    expect(propertyNameFor('!!!')).toBe('');
    expect(propertyNameFor('x'.repeat(80))).toHaveLength(64);
  });

  it('refuses, in words and by column: no email column, a bad or empty property name, a field twice, two columns of one name', () => {
    const header = ['Mail', 'Given', 'Other given', 'Notes', 'Notes', 'Extra'];
    const choices: Choice[] = [
      { target: 'skip', property: '' },
      { target: 'firstName', property: '' },
      { target: 'firstName', property: '' },
      { target: 'property', property: 'notes' },
      { target: 'skip', property: '' },
      { target: 'property', property: 'has space' },
    ];
    const { byColumn, overall } = checkChoices(header, choices);
    expect(overall).toBe('Choose the column that holds the email addresses: every contact needs one.');
    expect(byColumn[0]).toBeNull();
    expect(byColumn[1]).toBeNull();
    expect(byColumn[2]).toBe('Column “Given” is already the first name: choose something else for this one.');
    expect(byColumn[3]).toMatch(/Another column is also called “Notes”/);
    expect(byColumn[4]).toBeNull();
    expect(byColumn[5]).toMatch(/^A property name starts with a letter/);
    expect(checkChoices(['a'], [{ target: 'property', property: ' ' }]).byColumn[0]).toBe(
      'Name the property, or choose “Don’t import”.',
    );
    const twice = checkChoices(
      ['e', 'p', 'q'],
      [
        { target: 'email', property: '' },
        { target: 'property', property: 'plan' },
        { target: 'property', property: 'plan' },
      ],
    );
    expect(twice).toEqual({
      byColumn: [null, null, 'Column “p” is already the property “plan”: choose something else for this one.'],
      overall: null,
    });
  });

  it('builds a ?columns= map the server accepts and reads as the table shows', () => {
    const header = ['E-mail Address', 'FNAME', 'LEID', 'Member Since', 'status', 'tags'];
    const choices: Choice[] = [
      { target: 'email', property: '' },
      { target: 'firstName', property: '' },
      { target: 'skip', property: '' },
      { target: 'property', property: 'joined' },
      // A column whose name is a field, imported as a property of that name.
      { target: 'property', property: 'status' },
      { target: 'property', property: 'tags' },
    ];
    const map = columnsParam(header, choices);
    expect(map).toEqual({
      'E-mail Address': 'email',
      FNAME: 'firstName',
      LEID: null,
      'Member Since': 'properties.joined',
      status: 'properties.status',
      tags: 'properties.tags',
    });
    const cols = csvColumns(header, checkColumnMap(JSON.parse(JSON.stringify(map))));
    expect(cols).toMatchObject({
      email: 0,
      firstName: 1,
      properties: [
        [3, 'joined'],
        [4, 'status'],
        [5, 'tags'],
      ],
    });
    expect(cols.status).toBeUndefined();
    expect(choices.map(describeChoice)).toEqual([
      'email address',
      'first name',
      'not imported',
      'property “joined”',
      'property “status”',
      'property “tags”',
    ]);
  });

  it('reads the header and the first 5 rows of a file, with its delimiter, BOM and quotes', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => `p${i}@example.com;"Name ${i}; Jr.";${i}`);
    const file = new File([`\ufeffEmail ; Name;Score\r\n\r\n${rows.join('\r\n')}\r\n`], 'people.csv');
    const preview = await previewCsv(file);
    expect(preview.header).toEqual(['Email', 'Name', 'Score']);
    expect(preview.rows).toHaveLength(5);
    expect(preview.rows[0]).toEqual(['p0@example.com', 'Name 0; Jr.', '0']);
    await expect(previewCsv(new File(['\n\n'], 'empty.csv'))).rejects.toThrow('The file is empty');
    // A file longer than what is read: the row cut off at the end is not shown.
    const big = new File([`email,notes\n${'a@example.com,' + 'x'.repeat(300_000)}\nb@example.com,y\n`], 'big.csv');
    expect((await previewCsv(big)).rows).toEqual([]);
  });

  it('counts in words with the right plural', () => {
    expect(countOf(0, 'row')).toBe('0 rows');
    expect(countOf(1, 'row')).toBe('1 row');
    expect(countOf(2, 'row')).toBe('2 rows');
    expect(countOf(1234, 'contact')).toMatch(/^1.234 contacts$/);
    expect(countOf(1, 'contact matches', 'contacts match')).toBe('1 contact matches');
  });
});
