import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['public'];

export const protectionDocs: OperationDocs = {
  'GET /assets/altcha/{name}': {
    tags,
    summary: 'The proof-of-work widget (ALTCHA), served from this origin',
    description:
      'The files of the proof-of-work widget (ALTCHA) that hosted pages and embeds load when a form asks for a proof of work: served by the service itself, never from a CDN, and cached for long (their addresses carry the version). No key.',
    response: '/* altcha widget */ (function(){ … })();',
    responseType: 'text/javascript',
    responses: { 404: { description: 'No widget file has this name.', example: '<h1>Not found</h1>' } },
  },
  'GET /f/{slug}/challenge': {
    tags,
    summary:
      "A proof-of-work challenge for the form (the widget asks for it); 404 when the form's proof of work is off",
    description:
      "A fresh, signed proof-of-work challenge for the form, which the widget solves in the visitor's browser before the submission is sent; the solution travels with the submission and is checked (once) on arrival. 404 when the form does not ask for a proof of work. Rate-limited per IP address and form. No key.",
    // An ALTCHA v2 challenge (altcha-lib 2, PBKDF2/SHA-256, deterministic: keyPrefix and keySignature from the server).
    response: {
      parameters: {
        algorithm: 'PBKDF2/SHA-256',
        cost: 1000,
        data: { f: 'fgrp_01JDZQ7W4X9V2B3N5M6K8H0GTR' },
        expiresAt: 1795566422,
        keyLength: 32,
        keyPrefix: '3f9a1c0d7e2b4a6c8d0e1f2a3b4c5d6e',
        keySignature: '5d2c…',
        nonce: '8e4b0a1f3c5d7e9f0a2b4c6d8e0f1a3b',
        salt: 'c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f9',
      },
      signature: '9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b',
    },
    responses: {
      404: {
        description: 'No published form has this slug, or its proof of work is off.',
        example: '<h1>Not found</h1>',
      },
      429: {
        description: 'Too many challenges from this address for the form (`Retry-After`).',
        example: '<h1>Too many requests</h1>',
      },
    },
  },
  'POST /f/{slug}/impression': {
    tags,
    summary: "An embed's impression: the script reports it once per page view; counted in the form's views",
    description:
      "The beacon an embed sends when it is shown, once per page view: counted in the form's views. Rate-limited per IP address and form (10 a minute), so one address cannot inflate the count. No key.",
    responses: {
      204: { description: 'Counted.' },
      404: { description: 'No published form has this slug.', example: '<h1>Not found</h1>' },
      429: {
        description: 'Too many impressions from this address for the form.',
        example: '<h1>Too many requests</h1>',
      },
    },
  },
};
