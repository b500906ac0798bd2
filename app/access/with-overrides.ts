/**
 * A port whose named methods are replaced and whose others are the target's own (bound to it),
 * so a wrapper keeps class-based adapters' methods and properties without listing them.
 */
export function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value: unknown = Reflect.get(t, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}
