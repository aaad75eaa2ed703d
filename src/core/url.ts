/** A URL fit for logs: any password or API key in the user-info part is hidden. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}
