// The converters (DatabaseValue, TypeConverter, the registry) are part of the DicRecord module for users.
@_exported import DicRecordConverters
