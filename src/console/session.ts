/**
 * The signed-in credential: an API key (or the operator token) kept in this tab's sessionStorage,
 * never in a URL, a cookie or localStorage — closing the tab signs out.
 */
const KEY = "vigil.console.credential";

export function storedCredential(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeCredential(value: string): void {
  sessionStorage.setItem(KEY, value);
}

export function forgetCredential(): void {
  sessionStorage.removeItem(KEY);
}
