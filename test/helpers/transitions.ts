import { expect } from 'vitest';
import { DomainError } from '../../src/errors/errors.js';

/** Asserts that `move` is refused with the documented 409 and `code`. */
export function expectRefused(move: () => unknown, code: string): void {
  let thrown: unknown;
  try {
    move();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(DomainError);
  expect((thrown as DomainError).code).toBe(code);
  expect((thrown as DomainError).status).toBe(409);
}
