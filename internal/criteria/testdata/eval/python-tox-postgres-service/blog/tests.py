from django.test import SimpleTestCase


class SmokeTests(SimpleTestCase):
    def test_truth(self):
        self.assertTrue(True)
