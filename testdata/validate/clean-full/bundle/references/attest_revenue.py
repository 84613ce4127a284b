def attest(receipt):
    return receipt['executed_sql'].startswith('SELECT')
