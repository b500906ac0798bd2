/**
 * Argument checks every adapter of a port applies the same way, so a bad call gets the same
 * structured error (field and rule) from every profile.
 */
import { invalidArgument } from '../core/errors.js';

export function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(field, 'range', `${field} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function checkStrings(field: string, values: unknown): string[] {
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) throw invalidArgument(field, 'type', `${field} must be an array of strings`);
  return values as string[];
}

export function checkNonEmpty(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'non_empty', `${field} must be a non-empty string`);
  return value;
}
