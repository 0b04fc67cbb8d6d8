/** A tool as the model sees it: name, description and a JSON Schema for the arguments. */
export interface FunctionSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}
