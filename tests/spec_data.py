"""The SPEC section 7 users feed, shared by the tests."""

USERS_COLUMNS = {
    "userId": "integer",
    "name": "varchar",
    "city": "varchar",
    "operation": "varchar",
    "sequenceNum": "integer",
}

USERS_CDF = [
    (124, "Raul", "Oaxaca", "INSERT", 1),
    (123, "Isabel", "Monterrey", "INSERT", 1),
    (125, "Mercedes", "Tijuana", "INSERT", 2),
    (126, "Lily", "Cancun", "INSERT", 2),
    (123, None, None, "DELETE", 6),
    (125, "Mercedes", "Guadalajara", "UPDATE", 6),
    (125, "Mercedes", "Mexicali", "UPDATE", 5),
    (123, "Isabel", "Chihuahua", "UPDATE", 5),
]

TRUNCATE_AT_3 = (None, None, None, "TRUNCATE", 3)

USERS_CONFIG = {
    "keys": ["userId"],
    "sequence_by": "sequenceNum",
    "apply_as_deletes": "operation = 'DELETE'",
    "apply_as_truncates": "operation = 'TRUNCATE'",
    "except_column_list": ["operation", "sequenceNum"],
}

SPEC_7_1 = [(124, "Raul", "Oaxaca"), (125, "Mercedes", "Guadalajara"), (126, "Lily", "Cancun")]
SPEC_7_2 = [(125, "Mercedes", "Guadalajara")]

FEED_MODEL = "select * from {{ target.schema }}.users_cdf"
