/** What the forms pages share: the API's form and the types a form can be. */
import type { paths } from '../../api/generated/schema';

export type Form = paths['/v1/forms/{formId}']['get']['responses'][200]['content']['application/json'];

export const FORM_TYPES = [
  { value: 'SIGN_UP', label: 'Sign-up form' },
  { value: 'SURVEY', label: 'Survey' },
];
