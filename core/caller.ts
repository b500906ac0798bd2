/** An authenticated HTTP caller (docs/decisions.md "Identity"); absent over stdio. */
export interface Caller {
  identity: string;
  scopes: string[];
  /** The token's source roots (canonical directories); absent = the server's roots alone. */
  roots?: string[] | undefined;
}
