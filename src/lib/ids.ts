import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

/** Resource ids: a type prefix and a ULID, so ids sort by creation time (lists are ordered by id). */
export type IdPrefix = 'ws' | 'key' | 'form' | 'fgrp' | 'tmpl' | 'dom' | 'ct' | 'topic' | 'seg' | 'imp' | 'bc' | 'dlv' | 'sub' | 'cnf' | 'sup' | 'inb' | 'tst' | 'evt' | 'wh' | 'whd' | 'wha' | 'usr' | 'ses' | 'inv' | 'pwr' | 'aut' | 'run';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid()}`;
}
