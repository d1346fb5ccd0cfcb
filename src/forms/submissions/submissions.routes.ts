import type { V1 } from '../../http/types.js';
import type { SubmissionsService } from './submissions.service.js';
import { validationFailed } from '../../errors/errors.js';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import { FormParams } from '../forms/forms.schemas.js';
import {
  SubmissionBody,
  SubmissionListQuery,
  SubmissionParams,
  SubmissionSchema,
  SubmissionSummarySchema,
} from './submissions.schemas.js';

/** Headless forms: the same code path as the hosted page (docs/api.md §4, Submissions). */
export async function submissionsRoutes(app: V1, { submissions }: { submissions: SubmissionsService }): Promise<void> {
  app.post(
    '/forms/:formId/submissions',
    {
      schema: { params: FormParams, body: SubmissionBody, response: { 201: SubmissionSchema } },
      config: { scope: 'write:forms', errors: ['form_not_published'] },
    },
    async (req, reply) => {
      const outcome = await submissions.submitViaApi(req.auth.workspaceId, req.params.formId, req.body, {
        ip: req.ip,
        userAgent: req.headers['user-agent'] ?? null,
      });
      if (!outcome.ok)
        throw validationFailed(
          outcome.errors.map((e) => ({
            path: `/${e.field.replace(/~/g, '~0').replace(/\//g, '~1')}`,
            message: e.message,
          })),
        );
      return reply.code(201).send(await submissions.get(req.auth.workspaceId, outcome.submissionId!));
    },
  );

  app.get(
    '/forms/:formId/submissions/summary',
    {
      schema: { params: FormParams, response: { 200: SubmissionSummarySchema } },
      config: { scope: 'read:forms' },
    },
    (req) => submissions.summary(req.auth.workspaceId, req.params.formId),
  );

  app.get(
    '/forms/:formId/submissions',
    {
      schema: { params: FormParams, querystring: SubmissionListQuery, response: { 200: ListOf(SubmissionSchema) } },
      config: { scope: 'read:forms' },
    },
    async (req) => {
      return paginate(req.query, (w) =>
        submissions.list(req.auth.workspaceId, req.params.formId, w.limit, w.beforeId, req.query.status),
      );
    },
  );

  // Review of the submissions held as a sign-up burst (docs/bot-protection.md).
  for (const action of ['release', 'discard'] as const) {
    app.post(
      `/forms/:formId/submissions/:submissionId/${action}`,
      {
        schema: {
          params: SubmissionParams,
          response: { 200: SubmissionSchema },
        },
        config: { scope: 'write:forms', errors: ['invalid_state'] },
      },
      (req) => submissions.review(req.auth.workspaceId, req.params.formId, req.params.submissionId, action),
    );
  }
}
