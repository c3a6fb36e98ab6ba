import unittest

import calc


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

    def test_add_strings(self):
        self.assertEqual(calc.add("a", "b"), "ab")
