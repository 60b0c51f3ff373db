/** Types of scripts/officejs.js (the Node loader of Microsoft's Excel client library). */
export declare const DIST: string;
export declare function clientFilePath(file: string): string;
export declare function prepareRealm(global: object): void;
export declare function installInThisRealm(options?: { profile?: string }): void;
