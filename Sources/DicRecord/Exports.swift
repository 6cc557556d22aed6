@_exported import DicRecordConverters
