import type { OperationDocs } from '../../http/operation-docs.js';

const notFoundPage = {
  description: 'No form has this slug, or none of its versions is PUBLISHED: a page that says so.',
  example:
    '<!doctype html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1><p>This form does not exist or is not published.</p></body></html>',
};

const tags = ['public'];

export const hostedDocs: OperationDocs = {
  'GET /assets/forms/timezone.js': {
    tags,
    summary: "The hosted page's script that keeps the visitor's time zone",
    description:
      "Loaded by the hosted page of a form with `settings.captureTimezone` (and by nothing else): it fills the hidden `_fc_tz` field with the browser's IANA time zone, which a sign-up gives to a contact that has none (docs/forms.md). Served by the service itself, cached for long (its address carries a version). No key.",
    response: "for(const i of document.querySelectorAll('input[data-formcast-tz]')){…}",
    responseType: 'text/javascript',
  },
  'GET /f/{slug}': {
    tags,
    summary: 'The hosted page of a form',
    description:
      "The public page of the group's PUBLISHED version (no key): the form with its heading, intro and consent text, the SEO fields as `<title>`, meta description, Open Graph image and favicon, in the workspace's language. `?fragment=1` answers the form's markup alone, for embedding.",
    response:
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Join the Acme newsletter</title><meta name="description" content="One email a month about what we ship."></head><body><main><h1>Join the Acme newsletter</h1><form method="post" action="/f/newsletter"><label>Email <input name="email" type="email" required></label><button>Subscribe</button></form></main></body></html>',
    responses: { 404: notFoundPage },
  },
  'OPTIONS /f/{slug}': {
    tags,
    summary: 'CORS preflight for submissions',
    description:
      'Lets a page on another site POST a submission with `fetch` (an embed): answers 204 with `Access-Control-Allow-Origin: *` and the allowed method and headers. No credentials are ever allowed.',
    responses: { 204: { description: 'The CORS headers, no body.' } },
  },
  'POST /f/{slug}': {
    tags,
    summary: 'Submit a form (public)',
    description:
      'Form-encoded or JSON. HTML answers: the success page (200, with `Refresh: 0` to /f/{slug}/thanks so that a reload does not send again), a 303 redirect (the REDIRECT success action), the page with errors (422). With Accept: application/json: { ok, message | redirect | errors }, or a problem document (422 proof_of_work_failed) when the form asks for a proof of work and the submission has none that verifies.',
    request: 'email=lin%40example.com&first_name=Lin',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      200: {
        description:
          "Accepted (a MESSAGE success action): the success page. It carries `Refresh: 0; url=/f/{slug}/thanks`: browsers go there in place of the POST's history entry, so a reload shows the page instead of sending the form again.",
        example: '<div data-formcast-success role="status"><p>Thanks! Check your inbox to confirm.</p></div>',
      },
      303: { description: 'Accepted (a REDIRECT success action): on to its URL (`Location`).' },
      404: notFoundPage,
      422: {
        description:
          'The submission is invalid: the page again, the errors next to the fields and the values kept. With `Accept: application/json`: `{ ok: false, errors: [{ field, message }] }`.',
        example: '<p class="error" id="email-error">Enter an email address.</p>',
      },
      429: {
        description:
          'Too many submissions from this address (SUBMISSIONS_PER_MINUTE); `Retry-After` says when to try again.',
        example: '<h1>Too many requests</h1><p>Please try again in a minute.</p>',
      },
    },
  },
  'GET /f/{slug}/thanks': {
    tags,
    summary: 'The success page of a hosted form',
    description:
      "What reloading the answer to a hosted submission shows (where the success page's `Refresh` leads) when the success action is a MESSAGE: the message on the form's page. For a REDIRECT form it sends the visitor on to its URL.",
    response:
      '<!doctype html><html lang="en"><head><title>Join the Acme newsletter</title></head><body><div data-formcast-success role="status"><p>Thanks! Check your inbox to confirm.</p></div></body></html>',
    responses: { 303: { description: 'A REDIRECT form: on to its URL (`Location`).' }, 404: notFoundPage },
  },
  'GET /f/{slug}/embed.js': {
    tags,
    summary: 'The embed script of a form',
    description:
      'A script to put on any site: `<script src="https://forms.example.com/f/newsletter/embed.js" async></script>` renders the form where the tag is (INLINE_EMBED) or as a popup (POPUP), isolated from the page\'s styles, and submits it without leaving the page. It loads nothing from a CDN and needs no `unsafe-eval`.',
    response:
      '(function(){var s=document.currentScript;var base="https://forms.example.com";/* renders /f/newsletter?fragment=1 next to the tag */})();',
    responses: {
      404: notFoundPage,
      503: {
        description:
          "This server's embed runtime is not built (dist/embed/runtime.js): run `npm run build` (`npm install` builds it); `formcast serve` says so when it starts.",
      },
    },
  },
  'GET /confirm/{token}': {
    tags,
    summary: 'The page of a double opt-in link',
    description:
      'What the link in a confirmation email opens: a page with one button. A GET changes nothing, because mail scanners and link previews fetch every link of a message; the button POSTs to the same address.',
    response:
      '<!doctype html><html lang="en"><head><title>Confirm your subscription</title></head><body><h1>Confirm your subscription</h1><form method="post" action="/confirm/v1.eyJkIjoiY25mXzAxSkRCNDMifQ.kY3x9Q"><button type="submit">Confirm</button></form></body></html>',
    responses: {
      404: {
        description: 'The link is not valid, was used already or expired.',
        example: '<h1>Confirm your subscription</h1><p>This link is not valid any more.</p>',
      },
    },
  },
  'POST /confirm/{token}': {
    tags,
    summary: 'Confirm a double opt-in sign-up',
    description:
      'Confirms the sign-up: the contact becomes SUBSCRIBED (lifting a suppression of the address) and a `contact.subscribed` event is recorded. Single use; links expire after 7 days.',
    response:
      '<!doctype html><html lang="en"><head><title>Subscription confirmed</title></head><body><h1>Subscription confirmed</h1><p>Thank you! You are on the list.</p></body></html>',
    responses: {
      404: {
        description: 'The link is not valid, was used already or expired.',
        example: '<h1>Confirm your subscription</h1><p>This link is not valid any more.</p>',
      },
    },
  },
};
