import type { BlockDocument } from '../../mail/blocks/grammar.js';

/**
 * The starter gallery (contract §16, `GET /v1/templates/gallery`): block documents to start an email from. Each is
 * valid for validateDocument, renders under 102 KB, scores below 1.0 with SpamAssassin's local rules
 * (test/unit/blocks.gallery.test.ts) and has its screenshots in docs/images/gallery/. They load nothing from
 * elsewhere: no images (colour comes from the document's settings and from html blocks drawn with tables), and every
 * link points to example.com for the author to replace.
 */
export interface GalleryItem {
  id: string;
  name: string;
  description: string;
  /** A subject line to start from. */
  subject: string;
  editorContent: BlockDocument;
}

const doc = (settings: BlockDocument['settings'], blocks: BlockDocument['blocks']): BlockDocument => ({
  type: 'formcast/blocks',
  version: 1,
  settings,
  blocks,
});

/** A coloured band with a small label and a large title, drawn with a table (an html block). */
const banner = (background: string, label: string, title: string, labelColor: string, extra = '') => ({
  type: 'html' as const,
  html: `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-collapse:separate"><tr><td style="background-color:${background};border-radius:8px;padding:32px 28px;font-family:Helvetica,Arial,sans-serif"><p style="margin:0 0 10px;font-size:13px;line-height:1.4;letter-spacing:1px;text-transform:uppercase;font-weight:700;color:${labelColor}">${label}</p><p style="margin:0;font-size:28px;line-height:1.2;font-weight:700;color:#ffffff">${title}</p>${extra}</td></tr></table>`,
});

const greeting = 'Hi {{ contact.firstName | default: "there" }},';

export const GALLERY: GalleryItem[] = [
  {
    id: 'newsletter',
    name: 'Newsletter',
    description:
      'A monthly round-up: an introduction, three stories with a link each, quick tips in columns, and your social links.',
    subject: 'What is new at Acme this month',
    editorContent: doc({ brandColor: '#4f46e5', backgroundColor: '#eef0f6' }, [
      { type: 'heading', text: 'The Acme monthly', level: 1 },
      {
        type: 'text',
        text: `<p>${greeting}</p><p>Here is what happened at Acme this month: a faster export, a new calendar view and a date for our next community call. Each story takes a minute to read.</p>`,
      },
      { type: 'divider' },
      { type: 'heading', text: 'Exports are five times faster', level: 2 },
      {
        type: 'text',
        text: '<p>Large exports now stream straight to your browser. A list of a hundred thousand rows is ready in seconds, and you can keep working while it downloads.</p>',
      },
      { type: 'button', text: 'Read about exports', url: 'https://example.com/blog/faster-exports' },
      { type: 'divider' },
      { type: 'heading', text: 'Plan your week in the calendar view', level: 2 },
      {
        type: 'text',
        text: '<p>Every task with a due date now shows up in a week or month view. Drag a task to another day to move it; the whole team sees the change at once.</p>',
      },
      { type: 'button', text: 'Try the calendar', url: 'https://example.com/calendar' },
      { type: 'divider' },
      { type: 'heading', text: 'Quick tips', level: 2 },
      {
        type: 'columns',
        columns: [
          [
            { type: 'heading', text: 'Shortcuts', level: 3 },
            { type: 'text', text: 'Press <b>?</b> anywhere to see every keyboard shortcut.' },
          ],
          [
            { type: 'heading', text: 'Templates', level: 3 },
            { type: 'text', text: 'Save a project as a template and start the next one in a click.' },
          ],
          [
            { type: 'heading', text: 'Dark mode', level: 3 },
            { type: 'text', text: 'It now follows the setting of your phone or computer.' },
          ],
        ],
      },
      { type: 'divider' },
      {
        type: 'text',
        text: '<p>Our next community call is on the first Thursday of next month. <a href="https://example.com/community">Add it to your calendar</a> and bring your questions.</p><p>Until next month,<br>The Acme team</p>',
      },
      {
        type: 'social',
        links: [
          { network: 'mastodon', url: 'https://example.com/mastodon' },
          { network: 'linkedin', url: 'https://example.com/linkedin' },
          { network: 'youtube', url: 'https://example.com/youtube' },
          { network: 'website', url: 'https://example.com' },
        ],
      },
      { type: 'footer', text: 'You receive the Acme monthly because you subscribed at example.com.' },
    ]),
  },
  {
    id: 'announcement',
    name: 'Announcement',
    description: 'One piece of news, told well: a coloured banner, what changed and why it matters, and one button.',
    subject: 'Scheduled sending is here',
    editorContent: doc({ brandColor: '#0f766e', backgroundColor: '#ecf3f2' }, [
      banner('#0f766e', 'New in Acme', 'Scheduled sending is here', '#99f6e4'),
      {
        type: 'text',
        text: `<p>${greeting}</p><p>You can now write an email today and have it go out at the moment that suits your readers: tomorrow at nine, or next Monday before lunch. Pick a date and a time, and Acme takes care of the rest.</p>`,
      },
      { type: 'heading', text: 'What you can do with it', level: 2 },
      {
        type: 'text',
        text: '<p><b>Send in your reader’s morning.</b> Choose a time and every message goes out then.</p><p><b>Change your mind.</b> A scheduled email can be edited or moved until it leaves.</p><p><b>See what is planned.</b> The calendar shows every scheduled email of the month.</p>',
      },
      { type: 'button', text: 'Schedule your next email', url: 'https://example.com/schedule', align: 'center' },
      {
        type: 'text',
        text: '<p>Questions? Reply to this email: it reaches our support team, and a person answers within a day.</p>',
      },
      { type: 'footer', text: 'You receive product news from Acme because you have an account at example.com.' },
    ]),
  },
  {
    id: 'welcome',
    name: 'Welcome',
    description:
      'The first email a new subscriber gets: a warm hello, three things to try, and a button to get started.',
    subject: 'Welcome to Acme, {{ contact.firstName | default: "friend" }}',
    editorContent: doc({ brandColor: '#db2777', backgroundColor: '#fbf1f5', fontFamily: 'rounded' }, [
      {
        type: 'heading',
        text: 'Welcome aboard, {{ contact.firstName | default: "friend" }}!',
        level: 1,
        align: 'center',
      },
      {
        type: 'text',
        align: 'center',
        text: '<p>Thank you for joining Acme. We are glad you are here. Over the next weeks we will send you a short email now and then with ideas to get the most out of it.</p>',
      },
      { type: 'button', text: 'Get started', url: 'https://example.com/start', align: 'center' },
      { type: 'spacer', height: 12 },
      { type: 'heading', text: 'Three things to try first', level: 2, align: 'center' },
      {
        type: 'columns',
        columns: [
          [
            { type: 'heading', text: '1. Set up your profile', level: 3 },
            { type: 'text', text: 'Add your name and photo, so your team knows who is who.' },
          ],
          [
            { type: 'heading', text: '2. Invite your team', level: 3 },
            { type: 'text', text: 'Acme works best together: invite a colleague in two clicks.' },
          ],
          [
            { type: 'heading', text: '3. Start a project', level: 3 },
            { type: 'text', text: 'Begin from a template, or from a blank page if you prefer.' },
          ],
        ],
      },
      { type: 'divider' },
      {
        type: 'text',
        text: '<p>If you have a question, just reply to this email. We read every message.</p><p>Warmly,<br>Maria, from the Acme team</p>',
      },
      { type: 'footer', text: 'You receive this email because you signed up at example.com.' },
    ]),
  },
  {
    id: 'event-invitation',
    name: 'Event invitation',
    description: 'An invitation with the date and the place up front, the programme, and a button to register.',
    subject: 'You are invited: Acme Live, our spring meetup',
    editorContent: doc({ brandColor: '#c2410c', backgroundColor: '#f7f1ea' }, [
      banner(
        '#7c2d12',
        'You are invited',
        'Acme Live: our spring meetup',
        '#fdba74',
        '<p style="margin:14px 0 0;font-size:16px;line-height:1.5;color:#ffedd5">Thursday 14 May, 6 pm · The Old Library, Springfield</p>',
      ),
      {
        type: 'text',
        text: `<p>${greeting}</p><p>Join us for an evening of short talks, demos of what we are building next, and good conversation with other people who use Acme every day.</p>`,
      },
      {
        type: 'columns',
        columns: [
          [
            { type: 'heading', text: 'When', level: 3 },
            { type: 'text', text: 'Thursday 14 May<br>Doors at 6 pm, talks at 6:30 pm' },
          ],
          [
            { type: 'heading', text: 'Where', level: 3 },
            { type: 'text', text: 'The Old Library<br>12 Market Street, Springfield' },
          ],
        ],
      },
      { type: 'heading', text: 'The programme', level: 2 },
      {
        type: 'text',
        text: '<p><b>6:30 pm</b> · What is new in Acme, with a live demo<br><b>7:00 pm</b> · How a small team plans a year in Acme<br><b>7:30 pm</b> · Questions, drinks and snacks</p>',
      },
      { type: 'button', text: 'Reserve your seat', url: 'https://example.com/events/acme-live', align: 'center' },
      {
        type: 'text',
        text: '<p>Seats are limited to eighty. If you cannot come, the talks will be online the week after.</p>',
      },
      { type: 'footer', text: 'You receive event invitations from Acme because you subscribed at example.com.' },
    ]),
  },
  {
    id: 'digest',
    name: 'Digest',
    description: 'A compact weekly list of links: a short title and a line for each, grouped under headings.',
    subject: 'Your weekly digest',
    editorContent: doc({ brandColor: '#2563eb', backgroundColor: '#f1f5f9', width: 560 }, [
      { type: 'heading', text: 'Your weekly digest', level: 1 },
      {
        type: 'text',
        text: '<p>The five most read articles of the week, and two from the archive, picked for {{ contact.firstName | default: "you" }}.</p>',
      },
      { type: 'divider' },
      { type: 'heading', text: 'This week', level: 2 },
      {
        type: 'text',
        text: '<p><a href="https://example.com/a/1"><b>How we cut our build time in half</b></a><br>Four changes, one afternoon, and what we would do differently.</p><p><a href="https://example.com/a/2"><b>Writing release notes people read</b></a><br>Short, concrete, and about the reader rather than the feature.</p><p><a href="https://example.com/a/3"><b>A calmer on-call rotation</b></a><br>What a small team changed to sleep through the night.</p><p><a href="https://example.com/a/4"><b>Designing for slow networks</b></a><br>Three habits that make an app feel fast on a train.</p><p><a href="https://example.com/a/5"><b>The case for boring technology</b></a><br>Why the tools you know are often the right ones.</p>',
      },
      { type: 'divider' },
      { type: 'heading', text: 'From the archive', level: 2 },
      {
        type: 'text',
        text: '<p><a href="https://example.com/a/archive-1"><b>Naming things, a field guide</b></a><br>Good names for variables, features and teams.</p><p><a href="https://example.com/a/archive-2"><b>Meetings that end early</b></a><br>An agenda, a note-taker and a clock.</p>',
      },
      { type: 'button', text: 'Read more on the blog', url: 'https://example.com/blog' },
      { type: 'footer', text: 'You receive the weekly digest because you subscribed at example.com.' },
    ]),
  },
  {
    id: 'plain-letter',
    name: 'Plain letter',
    description:
      'A personal note in a serif font, with no images and no buttons: it reads like a letter from a person.',
    subject: 'A note from our founder',
    editorContent: doc(
      { fontFamily: 'serif', backgroundColor: '#f5f3ee', textColor: '#2b2b2b', linkColor: '#8a4b08', width: 560 },
      [
        {
          type: 'text',
          text: `<p>Dear {{ contact.firstName | default: "reader" }},</p><p>Five years ago, two of us started Acme at a kitchen table with one idea: planning work should take less time than doing it. Today more than ten thousand teams use it, and many of you have been with us from the start.</p><p>This year we want to listen more. Over the next weeks we will call a few of you to hear what works, what does not, and what you would build if you were us. If you would like to be one of them, <a href="https://example.com/talk-to-us">pick a time that suits you</a>.</p><p>Thank you for your trust, and for every message you have sent us along the way.</p><p>With gratitude,<br>Sam Lee<br>Founder, Acme</p>`,
        },
        { type: 'footer', text: 'You receive letters from Acme because you subscribed at example.com.' },
      ],
    ),
  },
];
