print('db ok')
