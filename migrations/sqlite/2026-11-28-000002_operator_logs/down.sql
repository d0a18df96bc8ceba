DROP TABLE operator_logs;
