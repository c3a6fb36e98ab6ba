package org.springframework.samples.petclinic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotNull;

class PetClinicApplicationTests {

	@Test
	void applicationClassLoads() {
		assertNotNull(new PetClinicApplication());
	}

}
