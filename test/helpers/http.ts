/** A response body as JSON, typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the JSON answers tests read (validated against the specs by each test server)
export const json = (res: Response): Promise<any> => res.json();
