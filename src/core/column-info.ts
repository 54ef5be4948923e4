/**
 * What the database says of a mapped table, as information_schema reports it (read by
 * db/sql/read-table-schema.ts). Pure data, so the checks against the entities file
 * (core/entity-schema-check.ts) and the derived event schemas (publish/derived-schema.ts) are
 * unit-tested without a database.
 *
 *   dataType    information_schema DATA_TYPE, lower case: bigint, int, varchar, datetime, …
 *   columnType  COLUMN_TYPE as reported: "bigint(20) unsigned", "varchar(32)", "enum('A','B')"
 *   maxChars    CHARACTER_MAXIMUM_LENGTH for character types, else null
 *   charset     CHARACTER_SET_NAME for character types, else null
 *   autoUpdated the server sets it on every update (ON UPDATE CURRENT_TIMESTAMP): an UPDATE
 *               grant must name it too
 *   autoIncrement  AUTO_INCREMENT: an archive's id must not be (core/archive-schema-check.ts)
 *   generated   a generated column (VIRTUAL or STORED): the archive's copy does not write it
 */
export type ColumnInfo = Readonly<{
  name: string;
  dataType: string;
  columnType: string;
  nullable: boolean;
  maxChars: number | null;
  charset: string | null;
  autoUpdated?: boolean;
  autoIncrement?: boolean;
  generated?: boolean;
}>;

/** An index: its name and its columns in order (the primary key is named PRIMARY). */
export type IndexInfo = Readonly<{ name: string; columns: readonly string[]; unique: boolean }>;

export type TableInfo = Readonly<{ name: string; columns: ReadonlyMap<string, ColumnInfo>; indexes: readonly IndexInfo[] }>;

/** Every mapped table found, by name; a table missing from the map does not exist. */
export type SchemaInfo = ReadonlyMap<string, TableInfo>;

/** Which server it is: they differ in a few settings and in the Debezium connector that reads them. */
export type ServerFlavour = 'mariadb' | 'mysql';
