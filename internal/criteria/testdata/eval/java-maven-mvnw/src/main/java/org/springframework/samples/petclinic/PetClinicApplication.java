package org.springframework.samples.petclinic;

public class PetClinicApplication {

	public static void main(String[] args) {
		System.out.println("petclinic");
	}

}
