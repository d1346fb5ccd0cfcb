/** The API's field errors of the profile forms, in sentences for people (no pointers, no codes). */
export function passwordMessage(message: string | undefined): string | null {
  if (!message) return null;
  if (message.includes('not your current')) return 'That is not your current password.';
  return 'Enter your current password.';
}

export function codeMessage(message: string | undefined): string | null {
  if (!message) return null;
  if (message.includes('used already')) return 'That code was used already. Wait for the next code your app shows.';
  if (message.includes('recovery'))
    return 'That code is not right. Enter the current code of your app, or an unused recovery code.';
  if (message.includes('required')) return 'Enter the 6-digit code your app shows.';
  return "That code is not right. Check that your phone's clock is right, or wait for the next code.";
}

export function fieldMessage(what: string, message: string | undefined): string | null {
  if (!message) return null;
  return `The ${what} ${message.replace(/^must NOT have fewer than (\d+) characters$/, 'must be at least $1 characters')}.`;
}
